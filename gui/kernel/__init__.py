"""The session service (the controller), its ops, notices and the words for errors."""
