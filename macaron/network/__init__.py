"""The one network: a layer is a splitting scheme walked sub-step by sub-step (model), its operators, its position
signals, its reading of text.
"""
