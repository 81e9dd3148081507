"""The use cases every transport calls: look up, search, match, feedback, reload."""
