"""curation/audit"""
