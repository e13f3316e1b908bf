"""Command-line glue of each module: ``add_arguments``, ``run`` and ``demo`` (see CONTRIBUTING.md)."""
