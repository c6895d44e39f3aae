"""Many calls of a stateless tool over rows: archives on one machine (`groundrules batch`) and on
a cluster (Spark, Dask).

`plan` turns a row into the tool's arguments; `answer` runs a batch of rows through the registry
(`Service.call`, on a rulebook compiled once per process) and gives each row its answer, as JSON
lines, Python rows or an Arrow record batch; `formats` reads and writes JSONL, CSV and Parquet in
bounded chunks; `run` spreads the chunks over worker processes and writes the answers in input
order, so the output's bytes do not depend on the worker count; `summary` counts what the answers
say (the page `groundrules report --batch` draws). `spark` and `dask` are the engines' adapters
over `answer`.
"""
