"""
WSGI config for assessor project.

It exposes the WSGI callable as a module-level variable named ``application``.

For more information on this file, see
https://docs.djangoproject.com/en/5.2/howto/deployment/wsgi/
"""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'assessor.project.settings')

application = get_wsgi_application()

# What is loaded by now (Django, the apps and their libraries: about 190,000 objects) lives as long as the
# process. Frozen, it is skipped by the collector's full passes (a few milliseconds of a large page), and
# gunicorn's processes, forked from this one (--preload), keep sharing its memory pages instead of copying
# each page the collector writes to: what the gc.freeze documentation recommends before a fork.
gc.collect()
gc.freeze()
