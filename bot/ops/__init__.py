"""Operations plumbing: the one typed ``Settings``, structured logs, Prometheus metrics. Bottom layer."""
