"""Where models come from: shipped (pretrained/), the cache of imported releases, the Hugging Face Hub; one `locate`
and one `load` for every name.
"""
