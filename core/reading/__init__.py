"""Reading a session: the one fold of events into what a person reads (Qt-free).

The transcript, Compare and the document exports all read a session through this
package, so an entry means the same thing wherever it is shown.
"""
