"""A replay as HTML: one `<section id="replay">` in the report's style (`section`: a group of
`groundrules report --replay`, so `index.html#replay` opens it alone), or a whole page around it
(`page`); every value from the log is escaped."""
from __future__ import annotations

import json
from html import escape

from ...decision_log import replay
from . import page as report_page


def section(result: dict) -> str:
    summary = "\n".join(escape(line) for line in replay.lines(dict(result, examples={k: [] for k in replay.KINDS})))
    parts = ['<section class="group" id="replay"><h2>Replay of logged calls</h2>',
             f'<p class="summary">candidate <code>{escape(result["candidate"])}</code> · {result["replayed"]} replayed · '
             f'{result["changed"]} changed · {result["not_reproduced"]} not reproduced</p>',
             f'<pre class="diff">{summary}</pre>']
    for kind in replay.KINDS:
        shown = result["examples"][kind]
        if not shown:
            continue
        items = "".join(
            f'<li><code>{escape(ex["decision"])}</code> {escape(ex["tool"])} · {escape(ex["project"])} · '
            f'{escape(ex["at"])}<pre>{escape(json.dumps(ex["change"], ensure_ascii=False, indent=1))}</pre>'
            f'<pre>{escape(json.dumps(ex["arguments"], ensure_ascii=False)[:2000])}</pre></li>' for ex in shown)
        parts.append(f'<details class="changes" open><summary>{escape(kind.replace("_", " "))}: '
                     f'{len(shown)} example(s)</summary><ul>{items}</ul></details>')
    parts.append("</section>")
    return "\n".join(parts) + "\n"


def page(result: dict) -> str:
    header = f"<h1>groundrules — replay under <code>{escape(result['candidate'])}</code></h1>\n"
    return report_page.document("groundrules replay", header, section(result))
