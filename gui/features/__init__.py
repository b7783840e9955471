"""Features: each folder is one, installed into the window through the window's narrow interface."""
