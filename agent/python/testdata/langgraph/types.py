# Stand-in for langgraph.types: Command and Interrupt with the fields the
# worker and the stand-in graph use.


class Command:
    def __init__(self, *, graph=None, update=None, resume=None, goto=()):
        self.graph, self.update, self.resume, self.goto = graph, update, resume, goto


class Interrupt:
    def __init__(self, value, id=""):
        self.value, self.id = value, id
