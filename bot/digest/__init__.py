"""The weekly digest: pure selection and rendering (``content``), its exactly-once runner and scheduler."""
