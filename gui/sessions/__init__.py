"""The session list's views: the tree, its columns, the search page in its place, what an
empty list says."""
