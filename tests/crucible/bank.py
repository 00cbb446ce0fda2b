"""The question bank Crucible's tests write runs from: two questions on two kiddie requests."""

BANK = {
    "leaf": ["Why do leaves change color in the fall?", "Will the tree be okay after its leaves drop?"],
    "bee": ["How do bees make honey?", "Why do bees visit flowers?"],
}
