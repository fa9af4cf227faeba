print("cairn")
