"""Writing and packaging evidence: run directories (atomic, with a manifest),
results files, JUnit XML, probe outputs, SUMMARY.md, safe zip reading, bundles.
File names of a run directory are defined in evidence/paths.py."""
