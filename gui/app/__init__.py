"""Start-up: the launcher, the app's run, the feature registry and the start-up helpers."""
