"""The command line, the local console, and the composition root."""
