"""The grading engine: everything that runs untrusted learner code.

``grading`` grades one submission (a learner host per submission, the lab's checks here);
``batch`` grades many, in parallel and resumably, locally or on Dask; ``supervisor`` starts each
host under its limits, user and file-system view; ``forkserver`` starts hosts from a warm
interpreter; ``sandbox`` locks a host down from inside before the answer cells run.
"""
