"""The session store: sessions, the fork contract, backends, the index, atomic files."""
