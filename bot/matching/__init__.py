"""Pure text work: cleaning pasted logs, signatures, the text index, ranking cases, suspects, quality."""
