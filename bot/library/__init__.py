"""The case library: reading and validating case files, syncing them from the library's API."""
