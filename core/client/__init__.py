"""The client API that the GUI and the CLI use, over any carrier."""
