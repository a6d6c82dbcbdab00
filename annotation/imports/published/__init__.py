"""Gardner et al.'s (2020) published contrast sets in one step (docs/published/): the dataset's
own files, read as its evaluation script reads them, into a project made from a template that
fits the dataset, and kept as published.

- datasets: the one table of datasets, each with its reader, template, paper counts and page;
- services: the import itself (import_published), and its result;
- reading: what every reader shares (files, problems, a perturbation, JSON and table reads);
- one module per family of formats: delimited (CSV and TSV: IMDb, PERSPECTRUM, MC-TACO,
  MATRES), json_records (a JSON document or JSON Lines of records: BoolQ, NLVR2), squad
  (SQuAD-shaped JSON: Quoref, ROPES) and drop (DROP-shaped JSON).
"""
