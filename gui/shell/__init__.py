"""The main window, its wiring, the filter page and the tree's kept selection."""
