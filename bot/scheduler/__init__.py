"""Read-only views of the site's scheduler (Slurm through its client commands or slurmrestd)."""
