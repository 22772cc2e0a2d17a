"""Scripts that maintain the repository's bundled files."""
