"""Readers and writers for the real data formats qastress consumes and produces.

One module per format. Readers stream, validate at the edge and raise
:class:`tasks.io.errors.DataFormatError` naming the file, the line or record and what was
expected. Writers go through :func:`tasks.io.atomic.atomic_write` so a crash never leaves a
half-written file behind.
"""
