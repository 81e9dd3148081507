"""The case model and the result types every layer shares (pydantic). Pure, the bottom layer."""
