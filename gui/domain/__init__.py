"""Qt-free rules under the GUI: which message actions are valid, which forks are siblings."""
