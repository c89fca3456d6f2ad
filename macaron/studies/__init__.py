"""The studies the pages show: analysis of a trajectory, dynamics measures, learning over training, the orders of
convergence, the bridge to Neural ODEs, the zoo of shipped races.
"""
