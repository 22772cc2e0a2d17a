"""The reading core: files into JSON values, records, columns. It knows no record kind."""
