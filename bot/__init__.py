"""incident-bot: match GPU-cluster failures against a reviewed, bilingual incident library."""
