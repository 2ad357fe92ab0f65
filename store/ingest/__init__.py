"""Reading agent session transcripts into the library."""
