"""Small shared widgets and icons."""
