"""The Slack edge: the Bolt app factory, the HTTP and Socket Mode runtimes, file downloads."""
