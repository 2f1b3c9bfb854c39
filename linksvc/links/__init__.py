"""Links: the resolver (devices, bots, UTM, app stores, the decision), clicks and their details."""
