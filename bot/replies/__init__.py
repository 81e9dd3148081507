"""Pure rendering: results to Block Kit (with the plain ``text`` fallback) and to plain text; buttons and
their values; the label table; mrkdwn escaping."""
