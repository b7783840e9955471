"""The item models the views show: the lineage tree, its rows and filter, the transcript."""
