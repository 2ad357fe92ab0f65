"""Modal dialogs the screens push: one line of text, a relation to add, changes to confirm, a
skill to pick. They return their answer through `dismiss` and never navigate."""
