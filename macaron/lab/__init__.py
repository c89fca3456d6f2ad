"""The toy splitting ODEs of the lab: particle systems with an interaction F and a drift G, split by the scheme
registry's schemes.
"""
