print("modelstore: not built yet")
