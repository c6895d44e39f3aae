"""The analyst's tools: lint, the gate behind `groundrules test`, the corpora, corpus diffs,
traces and reports. They read the tables and call the tools through the registry."""
