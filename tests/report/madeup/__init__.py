"""A made-up measurement family for tests/report/test_families.py: a tool module
(``pingpong_tool``) and a report family module (``pingpong_family``), registered only
for a test's duration."""
