print("trips: not built yet")
