"""The agents people use: import, agent sources (watching their folders), Continue in."""
