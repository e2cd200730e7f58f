"""Ladders run: the runner (runner.py: plays the schedule through the referee, resumable and
concurrent), the executors that play matches (local.py, ray_executor.py, built by
executors.py), the lease that keeps it to one run per ladder (lease.py), and what runs say of
remote bots and their refusal (remote.py). The pure maths a ladder is drawn and rated by is
below the store (arena/schedule.py, arena/ratings.py); storage, the rating of finished matches
in schedule order and the rankings query are the store's (arena/store/)."""
