"""Stand-in for the agent gateway framework, which is not installed where this runs. Written for this
runner: only the names plugin/phone_platform.py imports, nothing of the framework's behaviour."""
