"""The link resolver: pure rules (devices, UTM, URLs, intent URLs, install referrers)."""
