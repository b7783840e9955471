"""Housekeeping: delete (to the trash, with Undo), duplicate, answer an approval."""
