"""set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads (being written)"""
__all__ = []
