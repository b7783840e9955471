"""The transcript pane: the view, its cards, follow, menus, fork header, approval box, composer."""
