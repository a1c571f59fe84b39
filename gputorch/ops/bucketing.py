"""Counting and bucketing ops: bincount, bucketize, searchsorted, histc, histogram (being written)"""
__all__ = []
