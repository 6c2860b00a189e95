# A stand-in for the langgraph package (not installable here: no PyPI):
# only langgraph.types.Command, which the worker imports to resume a
# graph after interrupt().
